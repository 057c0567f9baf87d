#!/usr/bin/env bash
# Builds ipybox's Linux packages into dist/:
#   ipybox          the command line and MCP server, headless (no WebKitGTK): /usr/bin/ipybox
#   ipybox-desktop  the desktop app (Tauri, WebKitGTK): /usr/bin/ipybox-desktop, its desktop
#                   entry, icons and AppStream metainfo; depends on ipybox of the same version
# each as a .deb and an .rpm. The headless package is a staging tree packed with dpkg-deb and
# rpmbuild; the desktop one is made by Tauri's bundler (`tauri build`, Tauri's command line from npm).
#
# Needs, besides what building ipybox needs (scripts/setup.sh): dpkg-deb (Debian) and rpmbuild
# (Debian package `rpm`, installed when missing); Tauri's command line comes from npm, with
# the UI's packages.
# scripts/test-package.sh installs the result into a fresh Debian root and tries it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="$HOME/.cargo/bin:$PATH"

VERSION="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version *= *"\(.*\)"/\1/p' Cargo.toml)"
[ -n "$VERSION" ] || { echo "!! no version in [workspace.package] of Cargo.toml"; exit 1; }
DEB_ARCH="$(dpkg --print-architecture)"   # amd64, arm64
RPM_ARCH="$(uname -m)"                    # x86_64, aarch64
DIST="$PWD/dist"
WORK="$PWD/target/packaging"
SUMMARY="Run Python in IPython kernels, call MCP tools from code, approve every call"
if ! command -v rpmbuild >/dev/null; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends rpm
fi
rm -rf "$WORK"
mkdir -p "$DIST" "$WORK"
grep -q "<release version=\"$VERSION\"" packaging/ai.ipybox.desktop.metainfo.xml \
  || echo "!! packaging/ai.ipybox.desktop.metainfo.xml has no <release> for $VERSION: add one"

echo "== ipybox $VERSION: the web UI (embedded in the desktop app)"
# shellcheck source=lib/node.sh
. scripts/lib/node.sh
ensure_node_for_ui
( cd ui && npm ci --no-audit --no-fund --loglevel=error && npm run build )

echo "== headless ipybox (release build, without the desktop feature)"
cargo build --release -p ipybox --no-default-features
# Copied now: the desktop build below writes its binary to the same place.
install -D -m 0755 target/release/ipybox "$WORK/ipybox/usr/bin/ipybox"
if ldd "$WORK/ipybox/usr/bin/ipybox" | grep -Eq 'webkit|gtk'; then
  echo "!! the headless ipybox links WebKitGTK or GTK"; exit 1
fi
echo "== srt with a Node.js of its own, in /usr/lib/ipybox/srt (the person needs no npm)"
"$WORK/ipybox/usr/bin/ipybox" setup --sandbox --srt-dir "$WORK/ipybox/usr/lib/ipybox/srt"
doc="$WORK/ipybox/usr/share/doc/ipybox"
mkdir -p "$doc"
cat > "$doc/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: ipybox
Source: https://github.com/ipybox/ipybox

Files: *
License: Apache-2.0
 On Debian systems the full text is in /usr/share/common-licenses/Apache-2.0.
EOF

echo "== ipybox_${VERSION}_${DEB_ARCH}.deb"
# The sandbox needs bubblewrap, socat and ripgrep; the kernels' environment python3-venv.
# srt and the Node.js it runs on are in the package (/usr/lib/ipybox/srt): no npm.
mkdir -p "$WORK/ipybox/DEBIAN"
cat > "$WORK/ipybox/DEBIAN/control" <<EOF
Package: ipybox
Version: $VERSION
Architecture: $DEB_ARCH
Maintainer: ipybox developers <https://github.com/ipybox/ipybox/issues>
Installed-Size: $(du -sk --exclude=DEBIAN "$WORK/ipybox" | cut -f1)
Depends: libc6, libgcc-s1, python3 (>= 3.10), python3-venv, bubblewrap, socat, ripgrep, ca-certificates
Suggests: ipybox-desktop
Section: devel
Priority: optional
Homepage: https://github.com/ipybox/ipybox
Description: $SUMMARY
 ipybox runs Python code in stateful IPython kernels, optionally inside a
 bubblewrap sandbox, turns the tools of MCP servers into a typed Python API
 and asks for approval of every tool call that code makes.
 .
 This package is the command line (ipybox exec, register, audit, setup,
 sandbox) and the MCP server (ipybox mcp), without the desktop app, which is
 in ipybox-desktop.
EOF
dpkg-deb --build --root-owner-group "$WORK/ipybox" "$DIST/ipybox_${VERSION}_${DEB_ARCH}.deb"

echo "== ipybox-$VERSION-1.$RPM_ARCH.rpm"
mkdir -p "$WORK/rpm"
cat > "$WORK/rpm/ipybox.spec" <<EOF
Name:      ipybox
Version:   $VERSION
Release:   1
Summary:   $SUMMARY
License:   Apache-2.0
URL:       https://github.com/ipybox/ipybox
Requires:  python3 >= 3.10, bubblewrap, socat, ripgrep, ca-certificates
Suggests:  ipybox-desktop
# A built binary goes in as it is: no debuginfo package, no stripping or byte-compiling.
%global debug_package %{nil}
%global __os_install_post %{nil}

%description
ipybox runs Python code in stateful IPython kernels, optionally inside a bubblewrap sandbox,
turns the tools of MCP servers into a typed Python API and asks for approval of every tool
call that code makes. This package is the command line and the MCP server (ipybox mcp),
without the desktop app, which is in ipybox-desktop.

%install
mkdir -p %{buildroot}
cp -a "$WORK/ipybox/usr" %{buildroot}/

%files
/usr/bin/ipybox
/usr/lib/ipybox
%doc /usr/share/doc/ipybox/copyright
EOF
rpmbuild -bb --quiet --define "_topdir $WORK/rpm" --define "_build_id_links none" \
  --target "$RPM_ARCH" "$WORK/rpm/ipybox.spec"
cp "$WORK/rpm/RPMS/$RPM_ARCH/ipybox-$VERSION-1.$RPM_ARCH.rpm" "$DIST/"

echo "== ipybox-desktop (Tauri's bundler: release build with the desktop feature, .deb, .rpm)"
# Tauri's command line comes prebuilt from npm with the UI's packages (ui/package.json pins
# it; `npm ci` above installed it): nothing to compile for it.
tauri="$PWD/ui/node_modules/.bin/tauri"
# The package settings (name, binary name, icons, dependencies, desktop entry) apply to
# this build only: in src-tauri/tauri.conf.json bundling stays off for development builds.
sed "s/@VERSION@/$VERSION/g" packaging/tauri.desktop.json > "$WORK/tauri.desktop.json"
( cd src-tauri && "$tauri" build --ci --bundles deb,rpm --config "$WORK/tauri.desktop.json" )
cp "target/release/bundle/deb/ipybox-desktop_${VERSION}_${DEB_ARCH}.deb" \
   "target/release/bundle/rpm/ipybox-desktop-${VERSION}-1.${RPM_ARCH}.rpm" "$DIST/"

echo "== the signed APT repository (dist/apt)"
bash scripts/apt-repo.sh "$DIST"

echo "== dist/"
ls -l "$DIST"
