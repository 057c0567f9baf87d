#!/usr/bin/env bash
# Writes a signed APT repository of the .deb files in a folder, for people to install and
# update ipybox with apt:
#   scripts/apt-repo.sh [DIST]      (default: dist/, as scripts/package.sh leaves it)
# into DIST/apt/:
#   pool/main/*.deb                              the packages
#   dists/stable/main/binary-ARCH/Packages(.gz)  what apt reads about them
#   dists/stable/Release, InRelease, Release.gpg the index, signed
#   ipybox-archive-keyring.asc                   the public key apt checks with
#   ipybox.sources                               the source a person puts in /etc/apt/sources.list.d/
# Publish DIST/apt/ as it is (any static web server). Environment:
#   IPYBOX_APT_URL    where it will be published (default: the folder itself, file:/…)
#   IPYBOX_APT_GNUPG  the GnuPG home holding the signing key (default: a key of this user's
#                     own in ~/.local/share/ipybox-packaging/gnupg, made on first use)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

DIST="$(realpath "${1:-dist}")"
REPO="$DIST/apt"
URL="${IPYBOX_APT_URL:-file:$REPO}"
SUITE=stable
COMPONENT=main
export GNUPGHOME="${IPYBOX_APT_GNUPG:-$HOME/.local/share/ipybox-packaging/gnupg}"
KEY_NAME="ipybox packages"

shopt -s nullglob
debs=("$DIST"/*.deb)
[ ${#debs[@]} -gt 0 ] || { echo "!! no .deb files in $DIST (run scripts/package.sh first)" >&2; exit 1; }
for tool in dpkg-scanpackages gpg; do
  command -v "$tool" >/dev/null || { echo "!! $tool is missing (Debian: apt install dpkg-dev gnupg)" >&2; exit 1; }
done

if ! gpg --batch --list-secret-keys "$KEY_NAME" >/dev/null 2>&1; then
  echo "== a new signing key in $GNUPGHOME (keep it: updates must be signed with the same key)"
  mkdir -p "$GNUPGHOME"
  chmod 700 "$GNUPGHOME"
  gpg --batch --quiet --passphrase '' --quick-generate-key "$KEY_NAME" ed25519 sign never
fi

rm -rf "$REPO"
mkdir -p "$REPO/pool/$COMPONENT"
cp "${debs[@]}" "$REPO/pool/$COMPONENT/"
archs=()
for deb in "${debs[@]}"; do
  arch="$(dpkg-deb --field "$deb" Architecture)"
  [[ " ${archs[*]} " == *" $arch "* ]] || archs+=("$arch")
done
for arch in "${archs[@]}"; do
  dir="dists/$SUITE/$COMPONENT/binary-$arch"
  mkdir -p "$REPO/$dir"
  # Paths in Packages are relative to the repository's root.
  ( cd "$REPO" && dpkg-scanpackages --multiversion --arch "$arch" "pool/$COMPONENT" /dev/null 2>/dev/null ) > "$REPO/$dir/Packages"
  gzip -9 -n -k "$REPO/$dir/Packages"
done

release="$REPO/dists/$SUITE/Release"
{
  echo "Origin: ipybox"
  echo "Label: ipybox"
  echo "Suite: $SUITE"
  echo "Codename: $SUITE"
  echo "Architectures: ${archs[*]}"
  echo "Components: $COMPONENT"
  echo "Description: ipybox: Python in IPython kernels, MCP tools from code, every call approved"
  echo "Date: $(LC_ALL=C date -u '+%a, %d %b %Y %H:%M:%S UTC')"
  echo "SHA256:"
  ( cd "$REPO/dists/$SUITE" && for f in "$COMPONENT"/binary-*/Packages*; do
      printf ' %s %16d %s\n' "$(sha256sum "$f" | cut -d' ' -f1)" "$(stat -c %s "$f")" "$f"
    done )
} > "$release"
gpg --batch --yes --quiet --local-user "$KEY_NAME" --clearsign -o "$REPO/dists/$SUITE/InRelease" "$release"
gpg --batch --yes --quiet --local-user "$KEY_NAME" --armor --detach-sign -o "$REPO/dists/$SUITE/Release.gpg" "$release"
gpg --batch --armor --export "$KEY_NAME" > "$REPO/ipybox-archive-keyring.asc"

cat > "$REPO/ipybox.sources" <<EOF
Types: deb
URIs: $URL
Suites: $SUITE
Components: $COMPONENT
Signed-By: /etc/apt/keyrings/ipybox-archive-keyring.asc
EOF

echo "== $REPO: ${#debs[@]} packages for ${archs[*]}, signed by $(gpg --batch --with-colons --list-keys "$KEY_NAME" | awk -F: '/^fpr/ {print $10; exit}')"
echo "   To use it:  sudo install -D -m 0644 $REPO/ipybox-archive-keyring.asc /etc/apt/keyrings/ipybox-archive-keyring.asc"
echo "               sudo cp $REPO/ipybox.sources /etc/apt/sources.list.d/ && sudo apt update && sudo apt install ipybox-desktop"
