# shellcheck shell=bash
# Shared helpers for scripts/build-guest-image, scripts/guest/make-seed and
# scripts/guest/smoke-test. Sourced, not executed. Everything comes from the
# host's configured Debian apt sources via `apt-get download` + `dpkg -x`;
# nothing is installed on the host.

eg_log() { printf '%s: %s\n' "${EG_PROG:-egress-guest}" "$*" >&2; }
eg_die() { eg_log "error: $*"; exit 1; }

eg_cache_root() {
  printf '%s\n' "${EGRESS_GUEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/egress-guest}"
}

# Bounded network operations: a stuck mirror must not hang CI.
EG_APT_OPTS=(-q -o Acquire::http::Timeout=30 -o Acquire::https::Timeout=30 -o Acquire::Retries=2
  -o APT::Sandbox::User=root)

# eg_resolve PKG... -> prints "PKG=CANDIDATE_VERSION" lines (sorted).
# Runs `apt-get update` once (root only) if a package has no candidate, which
# is the normal state of a fresh Debian container with empty apt lists.
eg_resolve() {
  local out missing=() p
  out=$(eg__policy "$@")
  for p in "$@"; do grep -q "^$p=" <<<"$out" || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ]; then
    [ "$(id -u)" -eq 0 ] || eg_die "no apt candidate for: ${missing[*]} (run 'apt-get update' as root)"
    eg_log "no apt candidate for ${missing[*]}; running apt-get update"
    timeout 300 apt-get "${EG_APT_OPTS[@]}" update >&2
    out=$(eg__policy "$@")
    for p in "${missing[@]}"; do grep -q "^$p=" <<<"$out" || eg_die "no apt candidate for $p"; done
  fi
  sort <<<"$out"
}

eg__policy() {
  LC_ALL=C apt-cache policy "$@" 2>/dev/null | awk '
    /^[^ ].*:$/ { name = substr($0, 1, length($0) - 1) }
    /^  Candidate:/ { if ($2 != "(none)") print name "=" $2 }'
}

# eg_fetch DEBDIR PKG=VER... -> downloads missing .debs into DEBDIR (a shared,
# version-named pool) and prints their paths, one per line.
eg_fetch() {
  local dir=$1; shift
  local pv name ver want=() tmp f
  mkdir -p "$dir"
  for pv in "$@"; do
    name=${pv%%=*}; ver=${pv#*=}
    compgen -G "$dir/${name}_${ver//:/%3a}_*.deb" >/dev/null || want+=("$pv")
  done
  if [ ${#want[@]} -gt 0 ]; then
    # Download into a private dir, then move: a killed download never leaves
    # a truncated .deb in the pool.
    tmp=$(mktemp -d "$dir/.dl.XXXXXX")
    (cd "$tmp" && timeout 600 apt-get "${EG_APT_OPTS[@]}" download "${want[@]}" >&2) \
      || { rm -rf "$tmp"; eg_die "apt-get download failed: ${want[*]}"; }
    for f in "$tmp"/*.deb; do mv -f "$f" "$dir/"; done
    rm -rf "$tmp"
  fi
  for pv in "$@"; do
    name=${pv%%=*}; ver=${pv#*=}
    f=$(compgen -G "$dir/${name}_${ver//:/%3a}_*.deb" | head -n1) || true
    [ -n "$f" ] || eg_die "missing .deb for $pv after download"
    printf '%s\n' "$f"
  done
}

# eg_tools_dir -> prints a directory holding the host-side image tools
# (mtools, mkfs.vfat, syslinux, genisoimage) unpacked from Debian packages,
# cached by their versions. Used as: PATH="$dir/bin:$PATH".
EG_TOOL_PKGS=(mtools dosfstools syslinux syslinux-common genisoimage libmagic1)
eg_tools_dir() {
  local root pins key dir tmp deb debs f
  root=$(eg_cache_root)
  # EG_TOOL_PINS: versions already resolved by the caller (saves apt-cache time).
  pins=${EG_TOOL_PINS:-$(eg_resolve "${EG_TOOL_PKGS[@]}")}
  key=$(printf '%s\n' "$pins" | sha256sum | cut -c1-16)
  dir="$root/tools-$key"
  mkdir -p "$root"
  # Serialise concurrent builders/seed makers on one cache.
  exec {lockfd}>"$root/.tools.lock"
  flock -w 900 "$lockfd" || eg_die "timed out waiting for $root/.tools.lock"
  if [ ! -x "$dir/bin/mcopy" ]; then
    tmp=$(mktemp -d "$root/.tools.XXXXXX")
    # Always called as $(eg_tools_dir): this trap belongs to that subshell.
    trap 'rm -rf "$tmp"' EXIT
    # shellcheck disable=SC2086
    debs=$(eg_fetch "$root/debs" $pins) || exit 1
    for deb in $debs; do dpkg -x "$deb" "$tmp/root"; done
    mkdir -p "$tmp/bin"
    # Wrappers rather than symlinks: genisoimage needs libmagic1 from the
    # unpacked tree (not installed on the host); the rest only need libc.
    for f in "$tmp"/root/usr/bin/* "$tmp"/root/sbin/* "$tmp"/root/usr/sbin/*; do
      [ -f "$f" ] || continue
      printf '#!/bin/sh\nd=$(dirname "$0")/..\nLD_LIBRARY_PATH="$d/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$d/root%s" "$@"\n' \
        "${f#"$tmp"/root}" >"$tmp/bin/${f##*/}"
      chmod +x "$tmp/bin/${f##*/}"
    done
    printf '%s\n' "$pins" >"$tmp/versions"
    chmod 755 "$tmp"
    rm -rf "$dir"
    mv "$tmp" "$dir"
    trap - EXIT
  fi
  touch "$dir" # keeps it from being pruned (see eg_prune)
  exec {lockfd}>&-
  printf '%s\n' "$dir"
}

# eg_prune: drop cache entries unused for 30 days (images, tool trees,
# resolution memos); every use touches its entry. Cached .debs are kept.
eg_prune() {
  local root
  root=$(eg_cache_root)
  [ -d "$root" ] || return 0
  find "$root" -mindepth 1 -maxdepth 1 \( -name 'img-*' -o -name 'tools-*' -o -name 'resolved-*' \
    -o -name '.build.*' -o -name '.tools.*' -o -name '.dl.*' \) -mtime +30 -exec rm -rf {} + 2>/dev/null || true
}
