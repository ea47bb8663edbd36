# Sourced by .ci/run: a Docker >= 25 dockerd for the test of the real newer `docker save` layout
# (tests/test_docker_save_newer.py). Debian 12's docker.io is 20.10; trixie's docker.io (26.x) runs on
# Debian 12 (it needs libc6 >= 2.34 and the containerd already installed). apt fetches it with its own
# signature checks from a private source list, and only its dockerd is unpacked: nothing is installed.
# Exports IMGCHECK_TEST_DOCKERD; on any failure the tests that need it skip, with a line saying why.
fetch_newer_dockerd() {
  local dir=/var/cache/imgcheck-ci/trixie-docker
  local apt_opts=(-q -o "Dir::Etc::SourceList=$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
                  -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache" -o APT::Sandbox::User=root)
  if [ ! -x "$dir/root/usr/sbin/dockerd" ]; then
    "${SUDO[@]}" mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" || return 0
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" |
      "${SUDO[@]}" tee "$dir/sources.list" >/dev/null
    if ! ("${SUDO[@]}" apt-get "${apt_opts[@]}" update >/dev/null &&
          cd "$dir" && "${SUDO[@]}" apt-get "${apt_opts[@]}" download docker.io/trixie >/dev/null &&
          "${SUDO[@]}" dpkg-deb -x "$(ls "$dir"/docker.io_*.deb | head -1)" "$dir/root"); then
      echo ".ci/run: could not fetch trixie's docker.io; the newer docker save test will skip"
      return 0
    fi
  fi
  export IMGCHECK_TEST_DOCKERD="$dir/root/usr/sbin/dockerd"
}
