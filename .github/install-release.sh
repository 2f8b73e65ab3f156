#!/bin/sh
# Installs a released git-evolve and git-evolve-mcp for the runner the
# Action runs on: the archive for its OS and architecture, checked against
# the release's checksums.txt, unpacked, its directory added to the job's
# PATH. VERSION is a tag (v1.2.3) or latest; GH_TOKEN lets gh read the
# releases; GIT_EVOLVE_REPO names another repository to take them from.
set -eu
version=${VERSION:-latest}
repo=${GIT_EVOLVE_REPO:-git-evolve/git-evolve}

die() {
	echo "::error::git-evolve: $*" >&2
	exit 1
}

case "${RUNNER_OS:-$(uname -s)}" in
Linux) os=linux ;;
macOS | Darwin) os=darwin ;;
Windows | MINGW* | MSYS*) os=windows ;;
*) die "no release is built for ${RUNNER_OS:-$(uname -s)}: set build-from-source: true" ;;
esac
case "${RUNNER_ARCH:-$(uname -m)}" in
X64 | x86_64 | amd64) arch=amd64 ;;
ARM64 | aarch64 | arm64) arch=arm64 ;;
*) die "no release is built for ${RUNNER_ARCH:-$(uname -m)}: set build-from-source: true" ;;
esac

tag=$version
if [ "$version" = latest ]; then
	tag=$(gh release view --repo "$repo" --json tagName --jq .tagName) || die "cannot find the latest release of $repo"
fi
ver=${tag#v}
ext=tar.gz
[ "$os" = windows ] && ext=zip
archive="git-evolve_${ver}_${os}_${arch}.$ext"

dir="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/git-evolve-$ver"
mkdir -p "$dir"
cd "$dir"
gh release download "$tag" --repo "$repo" --pattern "$archive" --pattern checksums.txt --clobber ||
	die "cannot download $archive of $repo $tag"

sum=$(awk -v f="$archive" '$2 == f { print $1 }' checksums.txt)
[ -n "$sum" ] || die "checksums.txt of $tag does not list $archive"
if command -v sha256sum >/dev/null 2>&1; then
	got=$(sha256sum "$archive" | awk '{ print $1 }')
else
	got=$(shasum -a 256 "$archive" | awk '{ print $1 }')
fi
[ "$got" = "$sum" ] || die "$archive does not match checksums.txt of $tag (sha256 $got, listed $sum)"

if [ "$ext" = zip ]; then
	unzip -oq "$archive"
else
	tar -xzf "$archive"
fi
[ -x "$dir/git-evolve" ] || [ -f "$dir/git-evolve.exe" ] || die "$archive holds no git-evolve"
echo "$dir" >>"${GITHUB_PATH:?the job's GITHUB_PATH is not set}"
echo "git-evolve: installed $tag ($os/$arch) in $dir"
