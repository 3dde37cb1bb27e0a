"""Wrapper commands (sudo, env, timeout, xargs, ...): programs that run another command,
and how to find that command among their arguments."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class WrapperSpec:
    """How to find the wrapped command among a wrapper's arguments."""

    value_options: frozenset[str] = frozenset()  # options that take the next word
    skip_positionals: int = 0  # positionals before the command (timeout's duration)
    not_executing_flags: frozenset[str] = frozenset()  # `command -v rm` runs nothing
    skip_assignments: bool = False  # env NAME=VALUE cmd


def _spec(
    values: str = "", skip: int = 0, inert: str = "", assignments: bool = False
) -> WrapperSpec:
    return WrapperSpec(frozenset(values.split()), skip, frozenset(inert.split()), assignments)


_WSL_VALUES = (
    "-d --distribution -u --user --cd --shell-type --unregister --export --import "
    "--set-default -s --set-version --install"
)
DEFAULT_WRAPPERS: Mapping[str, WrapperSpec] = {
    "sudo": _spec("-u -g -p -C -h -U -r -t -T -D --user --group --prompt", assignments=True),
    "doas": _spec("-u -C"),
    "env": _spec("-u -C --unset --chdir", assignments=True),
    "timeout": _spec("-s -k --signal --kill-after", skip=1),
    "nice": _spec("-n --adjustment"),
    "ionice": _spec("-c -n -p --class --classdata"),
    "nohup": _spec(),
    "setsid": _spec(),
    "command": _spec(inert="-v -V"),
    "builtin": _spec(),
    "exec": _spec("-a"),
    "stdbuf": _spec("-i -o -e --input --output --error"),
    "time": _spec("-f -o --format --output"),
    "xargs": _spec(
        "-I -i -n -P -L -l -d -E -e -s -a --max-args --max-procs --delimiter "
        "--arg-file --replace --max-lines --eof"
    ),
    "busybox": _spec(),
    # WSL runs a Linux command: `wsl -d Ubuntu -e bash -c ...`, `wsl -- rm -rf x`.
    "wsl": _spec(_WSL_VALUES),
    "wsl.exe": _spec(_WSL_VALUES),
    "chroot": _spec("--userspec --groups", skip=1),
    "unbuffer": _spec(),
    "caffeinate": _spec(),
    "torsocks": _spec(),
    "proxychains": _spec("-f"),
    "proxychains4": _spec("-f"),
    "flock": _spec("-w -E --timeout", skip=1),
    "runuser": _spec("-u -g --user --group"),
    "pkexec": _spec("--user"),
    "toybox": _spec(),
    "systemd-run": _spec(
        "-u --unit -p --property -E --setenv --uid --gid --slice --description -M --machine "
        "-H --host --working-directory --nice --on-active --on-boot --on-startup --on-calendar "
        "--timer-property --path-property --socket-property"
    ),
    # Slurm runs its command on the cluster's nodes: `srun -p gpu -n 4 python train.py`.
    "srun": _spec(
        "-A --account -p --partition -t --time -N --nodes -n --ntasks -c --cpus-per-task -J "
        "--job-name -o --output -e --error --gres --mem -D --chdir -w --nodelist -q --qos -C "
        "--constraint --gpus -G --mpi --export"
    ),
    "strace": _spec("-o -e -p -s -u -E -a -b -O -S -P -I -X --output --trace --signal --attach"),
    "ltrace": _spec("-o -e -p -s -u -n -a -A -D -F -l -L -w"),
    "valgrind": _spec(),
    "unshare": _spec("--map-user --map-group -S --setuid -G --setgid -R --root -w --wd"),
    "chrt": _spec(skip=1),
    "taskset": _spec(skip=1),
    "cpulimit": _spec("-l --limit -p --pid -e --exe"),
    "firejail": _spec(),
    "fakeroot": _spec("-l --lib --faked -s -i"),
    "xvfb-run": _spec("-n --server-num -s --server-args -f --auth-file -e --error-file -p"),
    "catchsegv": _spec(),
    "nsenter": _spec("-t --target -S --setuid -G --setgid"),
    # watch and parallel run their words as shell text: see embedded_code.
    "rlwrap": _spec("-a -b -C -D -e -f -F -g -H -l -M -O -p -P -q -S -t -w -z"),
    "chronic": _spec(),
    "ifne": _spec(),
    "eatmydata": _spec(),
    "nocache": _spec(),
    "trickle": _spec("-u -d -w -t -l -n"),
    "torify": _spec(),
    "numactl": _spec("-C -N -m -i -p --physcpubind --cpunodebind --membind --interleave"),
    "prlimit": _spec("-p --pid -o --output"),
    "setpriv": _spec("--reuid --regid --groups --inh-caps --ambient-caps --bounding-set"),
}


def unwrap(rest: list[str], spec: WrapperSpec) -> list[str]:
    index = 0
    skipped = 0
    while index < len(rest):
        text = rest[index]
        if text == "--":
            index += 1
            break
        if text.startswith("-") and len(text) > 1:
            option = text.split("=", 1)[0]
            if option in spec.value_options and "=" not in text:
                index += 2
                continue
            if any(
                text.startswith(v) and len(text) > len(v)
                for v in spec.value_options
                if not v.startswith("--")
            ):
                index += 1  # value attached: -o0, -n10
                continue
            index += 1
            continue
        if spec.skip_assignments and "=" in text and not text.startswith("="):
            index += 1
            continue
        if skipped < spec.skip_positionals:
            skipped += 1
            index += 1
            continue
        break
    return rest[index:]
