# The convert image: the static release binary (libjpeg-turbo and HDF5 linked in, no shared
# library) on distroless/static: CA certificates for the cloud stores, time zone data, a
# nonroot user (uid 65532), no shell and no package manager. Build the binaries first:
#
#   scripts/release
#   docker buildx build --platform linux/amd64,linux/arm64 -t <registry>/convert:0.1.0 --push .
#
# VERSION picks dist/convert-VERSION-linux-ARCH; its default is the tool version in
# cmd/convert/main.go (a test in deploy/ checks that they agree).
FROM gcr.io/distroless/static-debian12:nonroot
ARG TARGETARCH
ARG VERSION=0.1.0
COPY dist/convert-${VERSION}-linux-${TARGETARCH} /usr/local/bin/convert
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/convert"]
CMD ["--help"]
