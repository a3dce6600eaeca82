#!/usr/bin/env bash
# Every reliability scenario at full length (about 22 minutes, 10 of them the soak). Short versions run in tests/run.sh via ctest.
set -uo pipefail
cd "$(dirname "$0")"
status=0
for s in s1_hub_sigkill s2_pg_restart s3_pg_sigkill s4_pos_outage s5_two_hubs s6_overload s7_graceful s8_soak s9_noisy_neighbour; do
  echo "== $s"
  python3 "$s.py" || status=1
done
exit $status
