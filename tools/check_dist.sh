#!/usr/bin/env bash
# make dist-test: the release archive works as the reference says — unpack it next to your project and add it as a
# local package. Unpacks ARCHIVE into a temporary directory, checks what the reference says it contains, writes a tiny
# package beside it that depends on it exactly as the README's install snippet shows, builds that package (one build:
# the library is compiled again from the archive, about a minute) and runs it.
# Usage: tools/check_dist.sh dist/profirest-api-swift-1.0.0.tar.gz profirest-api-swift-1.0.0
set -euo pipefail
archive="$1"
name="$2"
swift="${SWIFT:-swift}"

fail() { echo "check_dist: $*" >&2; exit 1; }
[ -f "$archive" ] || fail "no archive at $archive (make dist)"
work="$(mktemp -d "${TMPDIR:-/tmp}/profirest-dist.XXXXXX")"
trap 'rm -rf "$work"' EXIT

tar -xzf "$archive" -C "$work"
package="$work/$name"
[ -d "$package" ] || fail "the archive does not unpack into $name/"
# The reference: the library, the example client, unit tests, a README with the guide, the MIT licence, the changelog.
for path in Package.swift Sources/ProfirestAPI Sources/Pichacka Tests/ProfirestAPITests README.md LICENSE CHANGELOG.md; do
    [ -e "$package/$path" ] || fail "$path is missing from the archive"
done
grep -q "MIT License" "$package/LICENSE" || fail "LICENSE is not the MIT licence"
version="${name#profirest-api-swift-}"
grep -q "^## $version " "$package/CHANGELOG.md" || fail "CHANGELOG.md has no entry for $version"
grep -qF "static let version = \"$version\"" "$package/Sources/ProfirestAPI/Pipeline/LibraryVersion.swift" \
    || fail "the library's version constant is not $version"
grep -qF ".package(path: \"../$name\")" "$package/README.md" || fail "the README's install snippet does not name ../$name"

# The user's project, next to the unpacked folder; the dependency lines exactly as the README shows them.
app="$work/app"
mkdir -p "$app/Sources/App"
cat > "$app/Package.swift" <<SWIFT
// swift-tools-version:5.9
import PackageDescription

let package = Package(
    name: "app",
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8)],
    dependencies: [.package(path: "../$name")],
    targets: [.executableTarget(name: "App", dependencies: [.product(name: "ProfirestAPI", package: "$name")])]
)
SWIFT
cat > "$app/Sources/App/main.swift" <<'SWIFT'
import ProfirestAPI

let api = ProfirestApi(options: .init(clientID: "x"))
print(api.options.clientID ?? "")
print(ProfirestApi.uuid())
SWIFT

cd "$app"
"$swift" build --scratch-path "$app/.build"
output="$("$("$swift" build --scratch-path "$app/.build" --show-bin-path)/App")"
echo "$output"
[ "$(sed -n 1p <<<"$output")" = "x" ] || fail "the app did not print its client id"
sed -n 2p <<<"$output" | grep -Eq '^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' \
    || fail "the app did not print a UUIDv7"
echo "check_dist: $name installs and runs as the README shows"
