#!/usr/bin/env bash
# faults.sh CLUSTER_DIR PROGRAM CASE
#
# A job on 3 emulated hosts loses one mid-run; it must end non-zero within 10 s
# of the fault, with a message that names the host (and, where armi's
# heartbeats see it first, the rank).  PROGRAM is test_death_job_end, whose
# `long` mode prints "running" and then exchanges RMIs for a minute.
#   kill_mpi, kill_mixed  SIGKILL to the rank on host1
#   cut_mpi, cut_mixed    host2's link goes down (ip link set eth0 down)
# The link comes back up on every exit path.
set -uo pipefail
dir=$1 program=$2 case=$3

case $case in
  kill_mpi)   backend=(--armi-backend=mpi) victim=1 action=kill ;;
  kill_mixed) backend=(--armi-backend=mixed --armi-locations=2) victim=1 action=kill ;;
  cut_mpi)    backend=(--armi-backend=mpi) victim=2 action=cut ;;
  cut_mixed)  backend=(--armi-backend=mixed --armi-locations=2) victim=2 action=cut ;;
  *) echo "faults.sh: unknown case $case" >&2; exit 2 ;;
esac
if [[ $action == kill ]]; then
  # hydra reports the process it lost; armi's heartbeat reports its rank.
  expect="host1"
else
  # Only armi's heartbeat can tell: host0 watches host2 in the ring of hosts.
  expect="rank 2 \(host host2\) has sent no heartbeat"
fi

out=$(mktemp)
job=""
cleanup() {
  [[ $action == cut ]] && ip -n "host$victim" link set eth0 up 2>/dev/null
  [[ -n $job ]] && kill -9 "$job" 2>/dev/null
  rm -f "$out"
}
trap cleanup EXIT
fail() {
  echo "faults.sh $case: $*"
  echo "---- output ----"
  cat "$out"
  exit 1
}

TIMEOUT=60 "$dir/mpirun.sh" 3 "$program" "${backend[@]}" long >"$out" 2>&1 &
job=$!
for _ in $(seq 300); do
  grep -q "job_end: running" "$out" && break
  kill -0 "$job" 2>/dev/null || fail "the job ended before it ran"
  sleep 0.1
done
grep -q "job_end: running" "$out" || fail "the job did not start within 30 s"
sleep 0.5

start=$(date +%s.%N)
if [[ $action == kill ]]; then
  killed=0
  for pid in $(ip netns pids "host$victim"); do
    if [[ $(cat "/proc/$pid/comm" 2>/dev/null) == test_death_job* ]]; then
      kill -9 "$pid" && killed=1
    fi
  done
  ((killed)) || fail "no rank found on host$victim"
else
  ip -n "host$victim" link set eth0 down || fail "cannot cut host$victim's link"
fi
wait "$job"
rc=$?
job=""
elapsed=$(echo "$(date +%s.%N) - $start" | bc)

echo "faults.sh $case: the job ended with status $rc, $elapsed s after the fault"
grep -E "armi: error|RUNNING AT|EXIT CODE" "$out" | head -n 5
((rc != 0)) || fail "the job exited 0"
((rc != 124 && rc != 137)) || fail "the job did not end on its own (mpirun.sh's timeout)"
(($(echo "$elapsed < 10" | bc))) || fail "the job took $elapsed s to end"
grep -Eq "$expect" "$out" || fail "no message matching: $expect"
echo "faults.sh $case: ok"
