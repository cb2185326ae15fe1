# A throw-away single-node Slurm for tests: munged with a key of its own, slurmctld and slurmd
# with a slurm.conf for this host (its real CPUs and memory), every socket, state folder, log and
# pid file under one folder. Nothing under /etc is touched; the system's own munge/slurm (if any)
# keep running beside it (other ports, another munge socket).
#   source tests/slurm/local_slurm.sh
#   local_slurm_start DIR    # exports SLURM_CONF; returns non-zero if it cannot start (then see local_slurm_logs)
#   local_slurm_stop         # kills what local_slurm_start started, by pid; safe to call twice
#   local_slurm_logs         # prints the daemons' logs

LOCAL_SLURM_DIR=""
LOCAL_SLURM_PIDS=()

# A free TCP port on localhost, asked of the kernel (bind to port 0).
local_slurm_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

local_slurm_logs() {
  [ -n "$LOCAL_SLURM_DIR" ] || return 0
  local f
  for f in "$LOCAL_SLURM_DIR"/log/*.log; do
    [ -f "$f" ] || continue
    echo "----- $f (last 60 lines) -----"
    tail -n 60 "$f"
  done
}

local_slurm_stop() {
  local pid
  for pid in "${LOCAL_SLURM_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${LOCAL_SLURM_PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  LOCAL_SLURM_PIDS=()
}

# Waits up to $2 seconds for command $1 (a string) to succeed; gives up at once when a daemon
# it started has died.
local_slurm_wait_for() {
  local deadline=$((SECONDS + $2)) pid
  until eval "$1" >/dev/null 2>&1; do
    for pid in "${LOCAL_SLURM_PIDS[@]}"; do
      kill -0 "$pid" 2>/dev/null || { echo "local_slurm: a daemon (pid $pid) exited"; return 1; }
    done
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}

local_slurm_start() {
  LOCAL_SLURM_DIR="$1"
  local d="$LOCAL_SLURM_DIR"
  for tool in munged mungekey slurmctld slurmd sbatch scontrol squeue; do
    command -v "$tool" >/dev/null || { echo "local_slurm: $tool not found; scripts/setup.sh installs slurm-wlm and munge"; return 1; }
  done
  mkdir -p "$d"/munge "$d"/key "$d"/log "$d"/state "$d"/spool "$d"/run
  chmod 755 "$d" "$d"/munge
  chmod 700 "$d"/key

  # munge: a fresh key, its own socket. munged refuses group/world-writable folders on the
  # socket's path (/tmp is one), hence --force.
  mungekey --create --keyfile="$d/key/munge.key" --bits=1024 || return 1
  munged --force --key-file="$d/key/munge.key" --socket="$d/munge/munge.sock" --pid-file="$d/munge/munged.pid" \
         --seed-file="$d/munge/munged.seed" --log-file="$d/log/munged.log" --foreground >>"$d/log/munged.stdout.log" 2>&1 &
  LOCAL_SLURM_PIDS+=($!)
  local_slurm_wait_for "[ -S '$d/munge/munge.sock' ]" 10 || { echo "local_slurm: munged did not start"; return 1; }

  # The node as slurmd sees this host: its real CPUs and memory.
  local node host ctl_port d_port
  node=$(slurmd -C | head -n 1)
  host=$(hostname -s)
  ctl_port=$(local_slurm_free_port)
  d_port=$(local_slurm_free_port)
  cat > "$d/slurm.conf" <<CONF
ClusterName=kbvtest
SlurmctldHost=$host
SlurmUser=$(id -un)
SlurmdUser=root
SlurmctldPort=$ctl_port
SlurmdPort=$d_port
AuthType=auth/munge
AuthInfo=socket=$d/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/run/slurmctld.pid
SlurmdPidFile=$d/run/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=600
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
$node State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF="$d/slurm.conf"
  slurmctld -D -i -f "$SLURM_CONF" >>"$d/log/slurmctld.stdout.log" 2>&1 &
  LOCAL_SLURM_PIDS+=($!)
  slurmd -D -f "$SLURM_CONF" >>"$d/log/slurmd.stdout.log" 2>&1 &
  LOCAL_SLURM_PIDS+=($!)
  if ! local_slurm_wait_for "sinfo -h -o %T | grep -qE '^(idle|mixed|allocated)'" 60; then
    echo "local_slurm: the node did not come up (sinfo: $(sinfo -h 2>&1))"
    return 1
  fi
}
