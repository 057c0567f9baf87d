#!/usr/bin/env bash
# scripts/apt-repo.sh writes a repository apt accepts: two small packages (the names and
# layout of ipybox's) go in, `apt-get update` with the repository's .sources file and key
# verifies its signature, and `apt-get download` fetches the packages with their checksums
# checked. A repository signed by another key, or a package changed after signing, is
# refused. apt runs with directories of its own: the machine's apt state is not touched.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROOT="$PWD"
work="$(mktemp -d)"
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

arch="$(dpkg --print-architecture)"
make_deb() { # name version depends
  local tree="$work/build/$1"
  mkdir -p "$tree/DEBIAN" "$tree/usr/share/doc/$1"
  echo "$1 $2" > "$tree/usr/share/doc/$1/README"
  cat > "$tree/DEBIAN/control" <<EOF
Package: $1
Version: $2
Architecture: $arch
Maintainer: ipybox tests <tests@ipybox.invalid>
Depends: $3
Description: test package $1
EOF
  dpkg-deb --build --root-owner-group "$tree" "$work/dist/${1}_${2}_${arch}.deb" >/dev/null
}
mkdir -p "$work/dist"
make_deb ipybox 0.1.0 libc6
make_deb ipybox-desktop 0.1.0 "ipybox (= 0.1.0)"

export IPYBOX_APT_GNUPG="$work/gnupg"
bash scripts/apt-repo.sh "$work/dist" >/dev/null
repo="$work/dist/apt"
for f in dists/stable/InRelease dists/stable/Release.gpg ipybox-archive-keyring.asc ipybox.sources "dists/stable/main/binary-$arch/Packages.gz"; do
  [ -s "$repo/$f" ] || { echo "FAIL: $f is missing"; exit 1; }
done

# apt with a state of its own, the repository's .sources as a person installs it (its
# Signed-By pointed at the key where the test keeps it).
apt_run() {
  local base="$1"; shift
  apt-get -q -o Dir::State="$base/state" -o Dir::Cache="$base/cache" \
    -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$base/sources" \
    -o Dir::Etc::Trusted=/dev/null -o Dir::Etc::TrustedParts=/dev/null \
    -o Debug::NoLocking=1 -o APT::Sandbox::User=root "$@"
}
setup_apt() { # base key
  local base="$1"
  mkdir -p "$base/state/lists/partial" "$base/cache/archives/partial" "$base/sources"
  sed "s|^Signed-By: .*|Signed-By: $2|" "$repo/ipybox.sources" > "$base/sources/ipybox.sources"
}

a="$work/apt-ok"
setup_apt "$a" "$repo/ipybox-archive-keyring.asc"
out="$(apt_run "$a" update 2>&1)" || { echo "FAIL: apt-get update refused the repository:"; echo "$out"; exit 1; }
if grep -qiE "^(W|E):" <<<"$out"; then echo "FAIL: apt-get update warned:"; echo "$out"; exit 1; fi
policy="$(apt-cache -o Dir::State="$a/state" -o Dir::Cache="$a/cache" -o Dir::Etc::SourceParts="$a/sources" -o Dir::Etc::SourceList=/dev/null policy ipybox-desktop)"
grep -q "Candidate: 0.1.0" <<<"$policy" || { echo "FAIL: apt does not offer ipybox-desktop 0.1.0:"; echo "$policy"; exit 1; }
( cd "$work" && apt_run "$a" download ipybox ipybox-desktop >/dev/null 2>&1 ) \
  || { echo "FAIL: apt-get download failed"; exit 1; }
[ -s "$work/ipybox_0.1.0_${arch}.deb" ] || { echo "FAIL: nothing downloaded"; exit 1; }
echo "ok - apt verifies the repository's signature and fetches its packages"

# Another key: refused.
other="$work/other-gnupg"
mkdir -p "$other" && chmod 700 "$other"
GNUPGHOME="$other" gpg --batch --quiet --passphrase '' --quick-generate-key "someone else" ed25519 sign never
GNUPGHOME="$other" gpg --batch --armor --export "someone else" > "$work/other.asc"
b="$work/apt-other"
setup_apt "$b" "$work/other.asc"
if apt_run "$b" update >"$work/b.log" 2>&1 && ! grep -qE "NO_PUBKEY|not signed|is not signed|E:" "$work/b.log"; then
  echo "FAIL: a repository checked with another key was accepted:"; cat "$work/b.log"; exit 1
fi
echo "ok - checked with another key, the repository is refused"

# A package changed after signing: its checksum no longer matches, apt refuses it.
printf 'x' >> "$repo/pool/main/ipybox_0.1.0_${arch}.deb"
rm -f "$work/ipybox_0.1.0_${arch}.deb"
if ( cd "$work" && apt_run "$a" download ipybox >"$work/c.log" 2>&1 ); then
  echo "FAIL: a package changed after signing was fetched:"; cat "$work/c.log"; exit 1
fi
echo "ok - a package changed after signing is refused"
