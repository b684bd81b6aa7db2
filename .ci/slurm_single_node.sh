#!/usr/bin/env bash
# A real single-node SLURM cluster on this machine, from Debian's packages (slurmctld, slurmd,
# munge), running the small .test workflow through Snakemake's own executor plugin
# (snakemake-executor-plugin-slurm) with workflow/profiles/slurm, then checking that every
# table equals the one of a local run (timing columns aside), and stopping the services.
#
#   bash .ci/slurm_single_node.sh            # needs root (apt, services); about 5 minutes
#
# Results: results/slurm_test/ (the SLURM run) and results/slurm_local/ (the local reference);
# the cluster's configuration, state and logs in a temporary folder printed at the start.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 MPLBACKEND=Agg

work=$(mktemp -d /tmp/shuffledp-slurm.XXXXXX)
echo "== SLURM state, configuration and logs in $work"
host=$(hostname)
cpus=$(nproc)
mem_mb=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 2048 ))

echo "== install slurmctld, slurmd, munge (Debian) and the executor plugin (PyPI)"
export DEBIAN_FRONTEND=noninteractive
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    apt-get update -qq
    apt-get install -y -qq slurmd slurmctld slurm-client munge >/dev/null
fi
python -m pip install --quiet --disable-pip-version-check snakemake-executor-plugin-slurm

echo "== configure and start munge, slurmctld, slurmd ($host: $cpus CPUs, $mem_mb MB)"
mkdir -p "$work/state" "$work/spool" /run/munge
chown munge:munge /run/munge
chown -R munge:munge /var/log/munge /var/lib/munge /etc/munge 2>/dev/null || true
cat > "$work/slurm.conf" <<EOF
ClusterName=shuffledp
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MinJobAge=600
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$host CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=local Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
# the default location: the jobs' own srun calls read it (an exported SLURM_CONF does not
# reach them through the executor plugin); an existing configuration is kept aside
if [ -e /etc/slurm/slurm.conf ] && [ ! -e /etc/slurm/slurm.conf.shuffledp-saved ]; then
    cp /etc/slurm/slurm.conf /etc/slurm/slurm.conf.shuffledp-saved
fi
mkdir -p /etc/slurm
cp "$work/slurm.conf" /etc/slurm/slurm.conf
started_munge=0
if ! munge -n >/dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged
    started_munge=1
fi
/usr/sbin/slurmctld
/usr/sbin/slurmd
stop_services() {
    pkill -F "$work/slurmd.pid" 2>/dev/null || true
    pkill -F "$work/slurmctld.pid" 2>/dev/null || true
    if [ "$started_munge" = 1 ]; then pkill -x munged 2>/dev/null || true; fi
    if [ -e /etc/slurm/slurm.conf.shuffledp-saved ]; then
        mv /etc/slurm/slurm.conf.shuffledp-saved /etc/slurm/slurm.conf
    else
        rm -f /etc/slurm/slurm.conf
    fi
}
trap stop_services EXIT
for _ in $(seq 1 30); do
    if sinfo -h -o '%t' 2>/dev/null | grep -q idle; then break; fi
    sleep 1
done
sinfo

echo "== the .test workflow through SLURM (workflow/profiles/slurm)"
rm -rf results/slurm_test results/slurm_local
start=$(date +%s)
snakemake --workflow-profile workflow/profiles/slurm --configfile .test/config/config.yaml \
    --config run=slurm_test \
    --default-resources slurm_account=local slurm_partition=local mem_mb=2000 runtime=30 \
    --slurm-status-command squeue --slurm-init-seconds-before-status-checks 2 \
    --seconds-between-status-checks 3 --jobs "$cpus" >"$work/snakemake_slurm.log" 2>&1 || {
        echo "SLURM run failed; log: $work/snakemake_slurm.log"; tail -30 "$work/snakemake_slurm.log"
        exit 1
    }
echo "SLURM run: $(( $(date +%s) - start )) s, $(grep -c 'has been submitted with SLURM jobid' \
    "$work/snakemake_slurm.log") SLURM jobs"

echo "== the same workflow locally (the reference)"
snakemake --cores "$cpus" --configfile .test/config/config.yaml --config run=slurm_local \
    >"$work/snakemake_local.log" 2>&1

echo "== every table equal (timing columns aside)"
python - <<'EOF'
import glob
import os

import pandas as pd

TIMING = {"seconds", "seconds_min", "seconds_median"}
local = sorted(glob.glob("results/slurm_local/**/*.csv", recursive=True))
if not local:
    raise SystemExit("no tables in results/slurm_local")
for path in local:
    other = path.replace("results/slurm_local/", "results/slurm_test/", 1)
    if not os.path.exists(other):
        raise SystemExit(f"missing in the SLURM run: {other}")
    a, b = pd.read_csv(path), pd.read_csv(other)
    keep = [c for c in a.columns if c not in TIMING]
    if list(a.columns) != list(b.columns):
        raise SystemExit(f"{other}: columns differ from {path}")
    pd.testing.assert_frame_equal(a[keep], b[keep], check_exact=True, obj=other)
print(f"{len(local)} tables equal")
EOF
echo "== SLURM single-node check passed"
