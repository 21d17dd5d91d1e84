"""Connecting to a Ray cluster: bounded by `encode.connect_timeout` for every address form, one line on failure.

`encode.address` takes the forms Ray takes: `host:port` (the head's GCS port, as `ray start --head` prints it),
`ray://host:port` (Ray Client, port 10001 by default) and `auto` (a cluster this machine belongs to). Left alone,
Ray retries an unreachable `host:port` for many minutes with a warning per attempt and `ray://` for ~40 s, and
`auto` without a cluster advises command-line flags this tool does not have. Here: `auto` is resolved first (no
cluster: say to set `encode.address`), the head's port must accept a TCP connection and complete a gRPC handshake
within the timeout, and `ray.init` itself must return within what is left of it; otherwise an `EnvironmentFault`
(exit 2) names the address in one line.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from pathlib import Path
from typing import Any

from custom_tasks.errors import ConfigError

from ...results.store import EnvironmentFault

CLIENT_PREFIX = "ray://"


def import_ray(config: Path | str | None) -> Any:
    """The `ray` module, or a one-line ConfigError naming the config (call before any model loads)."""
    try:
        import ray
    except ImportError:
        raise ConfigError(config, "encode.engine 'ray' needs Ray, which is not installed: "
                                  "pip install 'private-mteb[ray]' (or set encode.engine: local)") from None
    return ray


def connect(ray: Any, address: str | None, timeout: float, config: Path | str | None) -> str:
    """`ray.init` for `address` (None: auto) within `timeout` seconds; returns the address connected to."""
    if ray.is_initialized():
        return address or "auto"
    given = address or "auto"
    deadline = time.monotonic() + timeout
    target = _resolve(given, config)
    host, port = _host_port(target, given, config)
    _probe(host, port, deadline, given, timeout, config)
    _grpc_ready(host, port, deadline, given, timeout, config)
    _init_within(ray, target, deadline, given, timeout, config)
    return target


def preflight(address: str | None, timeout: float, config: Path | str | None) -> Any:
    """`ray` imported and its head answering at `address` (resolved, TCP and gRPC within `timeout`), without
    starting a Ray session; a one-line error otherwise. `run` calls it before it prints anything: a run that
    cannot start on its cluster says so alone, not after a progress line and the lint line."""
    ray = import_ray(config)
    given = address or "auto"
    deadline = time.monotonic() + timeout
    host, port = _host_port(_resolve(given, config), given, config)
    _probe(host, port, deadline, given, timeout, config)
    _grpc_ready(host, port, deadline, given, timeout, config)
    return ray


def _fault(config: Path | str | None, given: str, problem: str) -> EnvironmentFault:
    return EnvironmentFault(config, f"encode.address {given!r}: {problem}")


def _resolve(given: str, config: Path | str | None) -> str:
    """`auto` -> the host:port of the cluster this machine belongs to (RAY_ADDRESS, the last `ray start`)."""
    if given != "auto":
        return given
    from ray._private.services import canonicalize_bootstrap_address_or_die

    try:
        return canonicalize_bootstrap_address_or_die("auto")
    except (ConnectionError, ValueError):
        raise _fault(config, given, "no Ray cluster runs on this machine; set encode.address in the config to "
                                    "the head's host:port (printed by `ray start --head`) or "
                                    "ray://<head-host>:10001") from None


def _host_port(target: str, given: str, config: Path | str | None) -> tuple[str, int]:
    rest = target[len(CLIENT_PREFIX):] if target.startswith(CLIENT_PREFIX) else target
    host, sep, port = rest.rstrip("/").rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ConfigError(config, f"encode.address {given!r} is not host:port, ray://host:port or auto")
    return host.strip("[]"), int(port)


def _probe(host: str, port: int, deadline: float, given: str, timeout: float, config: Path | str | None) -> None:
    """The head's port accepts a TCP connection before the deadline (an unreachable host fails here)."""
    try:
        with socket.create_connection((host, port), timeout=max(0.1, deadline - time.monotonic())):
            pass
    except TimeoutError:
        raise _fault(config, given, f"no answer from {host}:{port} within {timeout:g} s (encode.connect_timeout); "
                                    "is the head node up and the port open?") from None
    except OSError as e:
        raise _fault(config, given, f"cannot reach {host}:{port} ({e.strerror or e}); is the head node up and "
                                    "the address right?") from None


def _grpc_ready(host: str, port: int, deadline: float, given: str, timeout: float,
                config: Path | str | None) -> None:
    """A gRPC server (Ray's head and Ray Client both are) completes its handshake on the port before the deadline.

    Checked before `ray.init`, which against a port that accepts TCP but is not Ray retries for minutes in
    threads that cannot be stopped and that log to stderr.
    """
    import grpc

    channel = grpc.insecure_channel(f"{host}:{port}")
    try:
        grpc.channel_ready_future(channel).result(timeout=max(0.1, deadline - time.monotonic()))
    except grpc.FutureTimeoutError:
        raise _fault(config, given, f"{host}:{port} accepts connections but no Ray head answered within "
                                    f"{timeout:g} s (encode.connect_timeout); is it the head's port (6379, or "
                                    "10001 with ray://)?") from None
    finally:
        channel.close()


def _init_within(ray: Any, target: str, deadline: float, given: str, timeout: float,
                 config: Path | str | None) -> None:
    """`ray.init` in a helper thread: Ray's own retries can take minutes, the run waits until the deadline only."""
    outcome: dict[str, BaseException | None] = {}

    def init() -> None:
        try:
            ray.init(address=target, logging_level=logging.ERROR, log_to_driver=False)
            outcome["error"] = None
        except BaseException as e:  # noqa: BLE001 - handed to the waiting thread
            outcome["error"] = e

    worker = threading.Thread(target=init, name="ray-connect", daemon=True)
    worker.start()
    worker.join(max(0.0, deadline - time.monotonic()))
    if "error" not in outcome:
        raise _fault(config, given, f"the port answers, but Ray did not connect within {timeout:g} s "
                                    "(encode.connect_timeout); is it a Ray head of the same Ray version?")
    error = outcome["error"]
    if error is not None:
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise _fault(config, given, f"Ray could not connect: {first}") from None
