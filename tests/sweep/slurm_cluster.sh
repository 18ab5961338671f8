#!/usr/bin/env bash
# slurm_cluster.sh start DIR | stop DIR: a one-node SLURM cluster of Debian's munge, slurmctld
# and slurmd under DIR (as root): its own munge key and socket, private ports, state, spool and
# logs, accounting off. Commands then need SLURM_CONF=DIR/slurm.conf.
set -eu
D=$2
if [ "$1" = stop ]; then
  for p in "$D/slurmd.pid" "$D/slurmctld.pid" "$D/munge/munged.pid"; do
    [ -f "$p" ] || continue
    pid=$(cat "$p")
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done  # gone before DIR is removed
  done
  exit 0
fi
mkdir -p "$D"/{munge,state,spool,log}
chown munge: "$D/munge" 2>/dev/null || true
mungekey -c -k "$D/munge/munge.key" -f 2>/dev/null || mungekey --create --keyfile="$D/munge/munge.key" --force
chown munge: "$D/munge/munge.key"; chmod 400 "$D/munge/munge.key"
chmod 700 "$D/munge"
runuser -u munge -- munged --key-file="$D/munge/munge.key" --socket="$D/munge/munge.socket" \
  --pid-file="$D/munge/munged.pid" --log-file="$D/munge/munged.log" --seed-file="$D/munge/munge.seed" --force
chmod 755 "$D/munge"
host=$(hostname -s)
port=$((20000 + RANDOM % 20000))
cat >"$D/slurm.conf" <<CONF
ClusterName=looplab
SlurmctldHost=$host
SlurmUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$D/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$D/slurm.conf
slurmctld -i
slurmd
for _ in $(seq 150); do sinfo -h -o %T 2>/dev/null | grep -qE "idle|mixed" && exit 0; sleep 0.2; done
echo "slurm_cluster.sh: the node did not come up (see $D/log)" >&2
exit 1
