# shellcheck shell=bash
# A private apt configuration for the Debian suites vmamerge ports to
# (sourced by tools/port.sh and tests/setup.sh). It never touches the
# host's apt: its own sources.list, list directory, package cache and an
# empty dpkg status, all under $VMAMERGE_CACHE/apt/.
#
#   papt_init            write the configuration (idempotent)
#   papt_update          apt-get update of the private lists
#   papt apt-cache ...   run an apt command with the private configuration
#   papt apt-get ...
#   papt_download PKG=VER...   into $VMAMERGE_CACHE/debs unless there
#                        (needs deb_of of tests/lib.sh)

papt_suites=(bookworm bookworm-security bookworm-backports
	trixie trixie-security trixie-backports)
cache=${cache:-${VMAMERGE_CACHE:-/var/cache/vmamerge}}
papt_root=$cache/apt

papt_init() {
	local s uri
	mkdir -p "$papt_root/lists/partial" "$papt_root/cache/archives/partial" \
		"$papt_root/etc/preferences.d"
	[[ -f $papt_root/status ]] || : >"$papt_root/status"
	{
		for s in "${papt_suites[@]}"; do
			case $s in
			*-security) uri=http://deb.debian.org/debian-security ;;
			*) uri=http://deb.debian.org/debian ;;
			esac
			printf 'deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n' \
				"$uri" "$s"
		done
	} >"$papt_root/etc/sources.list.tmp"
	mv "$papt_root/etc/sources.list.tmp" "$papt_root/etc/sources.list"
}

# papt CMD ARGS...: CMD (apt-get, apt-cache) with the private configuration
papt() {
	local cmd=$1
	shift
	"$cmd" -o Dir::Etc::sourcelist="$papt_root/etc/sources.list" \
		-o Dir::Etc::sourceparts=/nonexistent \
		-o Dir::Etc::preferencesparts="$papt_root/etc/preferences.d" \
		-o Dir::State::Lists="$papt_root/lists" \
		-o Dir::State::status="$papt_root/status" \
		-o Dir::Cache="$papt_root/cache" \
		-o APT::Architecture=amd64 -o APT::Architectures::=amd64 \
		-o Acquire::Languages=none "$@"
}

# papt_update [MAX_AGE_S]: refresh the lists when older than MAX_AGE_S
# (default 6 h) or when VMAMERGE_APT_UPDATE=1
papt_update() {
	local max=${1:-21600} stamp=$papt_root/lists/.updated
	papt_init
	if [[ ${VMAMERGE_APT_UPDATE:-0} != 1 && -f $stamp ]] &&
		(($(date +%s) - $(stat -c %Y "$stamp") < max)); then
		return 0
	fi
	papt apt-get update -qq && touch "$stamp"
}

# papt_download PKG=VER...: download into $cache/debs what is not there yet
papt_download() {
	local pv want=() tmp=$cache/debs/.papt-download.$$
	for pv in "$@"; do deb_of "$pv" >/dev/null || want+=("$pv"); done
	((${#want[@]})) || return 0
	rm -rf "$tmp"
	mkdir -p "$tmp"
	# apt-get download runs as _apt when it can; keep the dir writable for it.
	chown _apt "$tmp" 2>/dev/null || true
	if ! (cd "$tmp" && papt apt-get download -q=2 "${want[@]}"); then
		rm -rf "$tmp"
		echo "apt-get download ${want[*]} failed" >&2
		return 1
	fi
	mv "$tmp"/*.deb "$cache/debs/"
	rm -rf "$tmp"
}
