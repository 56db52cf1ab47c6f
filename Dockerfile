# kfa in a container: a static binary on a small base, run as a non-root
# user, its data in the /data volume.
#
#   docker build -t kfa .
#   docker run -d --name kfa -p 127.0.0.1:8080:8080 -v kfa-data:/data \
#     -e KFA_PUBLIC_URL=http://127.0.0.1:8080 -e KFA_SEED_SAMPLES=true kfa
#   docker exec kfa kfa agent create --name alice --json
#
# compose.yaml does the same with docker compose. The build stage's go
# build line is the one cmd/kfa's TestDockerfileBuild runs (outside Docker),
# so the binary this image ships is built and checked by make test.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
ARG BUILD_DATE=unknown
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT} -X main.buildDate=${BUILD_DATE}" -o /out/kfa ./cmd/kfa

FROM alpine:3.21
# busybox wget answers the health check; nothing else is added.
RUN adduser -D -H -u 10001 -s /sbin/nologin kfa \
 && install -d -o kfa -g kfa -m 0700 /data
COPY --from=build /out/kfa /usr/local/bin/kfa
USER kfa
# Inside a container kfa must listen on every interface; publish the port
# on the host's loopback (or behind a proxy) and set KFA_PUBLIC_URL to the
# address clients use. Every flag is a KFA_* variable (kfa serve -h).
ENV KFA_DATA=/data \
    KFA_ADDR=0.0.0.0:8080
VOLUME /data
EXPOSE 8080
# /healthz is 200 while the process serves; the port follows KFA_ADDR.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD wget -q -O /dev/null "http://127.0.0.1:${KFA_ADDR##*:}/healthz" || exit 1
# SIGTERM drains requests for --shutdown-timeout (15s) before kfa exits;
# give docker stop longer than that (docker stop -t 30, stop_grace_period).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/kfa"]
CMD ["serve"]
