#!/usr/bin/env bash
# What the machine offers a sandbox: kernel, namespaces, cgroups, Landlock, seccomp, the GPU's
# device files, and whether torch's CUDA starts as another uid / inside namespaces / under
# RLIMIT_DATA. Prints one fact a line; nothing here changes the machine.
set -u
say() { printf '%-28s %s\n' "$1" "$2"; }
say kernel "$(uname -r)"
say id "$(id)"
say unprivileged_userns_clone "$(cat /proc/sys/kernel/unprivileged_userns_clone 2>/dev/null || echo n/a)"
say max_user_namespaces "$(cat /proc/sys/user/max_user_namespaces 2>/dev/null)"
say apparmor_restrict_userns "$(cat /proc/sys/kernel/apparmor_restrict_unprivileged_userns 2>/dev/null || echo n/a)"
say ptrace_scope "$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo n/a)"
say cgroup_fs "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)"
say cgroup_controllers "$(cat /sys/fs/cgroup/cgroup.controllers 2>/dev/null)"
say cgroup_subtree "$(cat /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null)"
say own_cgroup "$(cat /proc/self/cgroup)"
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] && mkdir /sys/fs/cgroup/kbvprobe 2>/dev/null; then
  echo "+memory +pids" > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
  echo 1G > /sys/fs/cgroup/kbvprobe/memory.max 2>/dev/null && say cgroup_memory_max "writable" || say cgroup_memory_max "NOT writable"
  echo 64 > /sys/fs/cgroup/kbvprobe/pids.max 2>/dev/null && say cgroup_pids_max "writable" || say cgroup_pids_max "NOT writable"
  [ -e /sys/fs/cgroup/kbvprobe/cgroup.freeze ] && say cgroup_freeze present || say cgroup_freeze absent
  [ -e /sys/fs/cgroup/kbvprobe/cgroup.kill ] && say cgroup_kill present || say cgroup_kill absent
  rmdir /sys/fs/cgroup/kbvprobe
else
  say cgroup_v2 "not mounted or not writable"
fi
say seccomp "$(grep -E 'Seccomp|NoNewPrivs' /proc/self/status | tr '\n' ' ')"
say dev_nvidia "$(ls -l /dev/nvidia* 2>&1 | awk '{print $1, $NF}' | tr '\n' ';')"
say nvidia_smi "$(nvidia-smi --query-gpu=name,driver_version,compute_mode,mig.mode.current --format=csv,noheader 2>&1)"
say unshare "$(unshare --version 2>&1 | head -1)"
say setpriv "$(command -v setpriv) $(command -v newuidmap)"
say python "$(command -v python3) $(python3 --version 2>&1)"
say venv_perms "$(stat -c '%a %U' "$(python3 -c 'import torch,os;print(os.path.dirname(torch.__file__))')" 2>&1)"
T='import torch; x=torch.ones(4,device="cuda"); print("cuda ok", float(x.sum()))'
say torch_as_65534 "$(setpriv --reuid=65534 --regid=65534 --clear-groups python3 -c "$T" 2>&1 | tail -1)"
say torch_in_userns_pid_net "$(unshare --user --map-root-user --pid --fork --mount-proc --net python3 -c "$T" 2>&1 | tail -1)"
say torch_rlimit_data_16G "$(prlimit --data=17179869184 python3 -c "$T" 2>&1 | tail -1)"
say torch_rlimit_as_64G "$(prlimit --as=68719476736 python3 -c "$T" 2>&1 | tail -1)"
say cpus "$(nproc)"
