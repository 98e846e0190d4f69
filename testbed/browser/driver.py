"""`python -m testbed.browser.driver`: the client side of a `browser` flow (docs/browser.md).

On the mobile host, in a mount namespace of its own (the flow runs it under `unshare --mount`), so
that /etc/resolv.conf names only the replay's DNS server, reached over the emulated link. It
starts headless Chromium with a fresh profile and the replay's key trusted, attaches to its page
over the DevTools pipe, prints `ready` and waits: the replication starts it before t = 0 and sends
SIGUSR1 at the flow's start (so the browser's start-up never counts against the link's clock).
Then it navigates to the page, follows the load until the load event and every request started
before it has ended (at most `--timeout`), writes the request log (`--log`, JSON) and prints its
summary as one JSON line. With `--warm` the page is loaded twice, the second load measured (the
first fills the cache: docs/browser.md)."""
from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from testbed.browser import dns, netlog
from testbed.browser.devtools import DevTools, DevToolsError
from testbed.browser.requests_log import PageLoad

# the browser itself, not Debian's /usr/bin/chromium wrapper, whose defaults (/etc/chromium.d: Google API
# keys, remote extensions) make it look up accounts.google.com and update.googleapis.com
CHROMIUM = "/usr/lib/chromium/chromium"
# Headless, nothing but the page: no background fetches, updates, sync, metrics or QUIC (nginx
# serves TCP only), no sandbox (root in a namespace), software rendering.
FLAGS = ("--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--disable-default-apps", "--disable-extensions", "--disable-domain-reliability",
         "--disable-client-side-phishing-detection", "--disable-breakpad", "--no-pings", "--disable-quic",
         "--metrics-recording-only", "--disable-dev-shm-usage", "--mute-audio", "--password-store=basic",
         "--disable-features=OptimizationHints,MediaRouter,Translate,AutofillServerCommunication,"
         "CertificateTransparencyComponentUpdater,InterestFeedContentSuggestions,DnsOverHttps,"
         "NetworkTimeServiceQuerying,PrivacySandboxSettings4,HttpsUpgrades")
LOOKUP_LEAD_MS = 50.0      # Chromium's wall clock of navigation start is a few ms off its NetLog's
AFTER_LOAD_S = 5.0          # requests still open at the load event may end this much later
# the document's Navigation Timing (ms from navigation start) and navigation start itself (ms since the epoch)
NAVIGATION_TIMING = ("JSON.stringify(Object.assign(performance.getEntriesByType('navigation')[0].toJSON(), "
                     "{timeOrigin: performance.timeOrigin}))")


def main(args: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m testbed.browser.driver", description=__doc__)
    p.add_argument("--url", required=True)
    p.add_argument("--names", required=True, help="the page's host names, comma-separated: the only ones looked up")
    p.add_argument("--resolver", required=True, help="the replay's DNS server's address")
    p.add_argument("--spki-file", type=Path, help="the replay's server key hash (testbed/browser/ca.py)")
    p.add_argument("--profile", type=Path, required=True, help="a fresh profile directory (removed first)")
    p.add_argument("--log", type=Path, required=True)
    p.add_argument("--timeout", type=float, default=600.0, help="seconds for the load")
    p.add_argument("--warm", action="store_true")
    p.add_argument("--chromium", default=CHROMIUM)
    a = p.parse_args(args)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1, signal.SIGTERM, signal.SIGINT})
    browser = None
    try:
        _point_resolver(a.profile, a.resolver)
        browser = _start(a)
        session = _attach(browser)
        print("ready", flush=True)
        if signal.sigwait({signal.SIGUSR1, signal.SIGTERM, signal.SIGINT}) != signal.SIGUSR1:
            return _fail("stopped before the flow's start")
        _stop_on_signals()
        if a.warm:
            _load(browser, session, a.url, a.timeout)
            _blank(browser, session)
        load, navigation = _load(browser, session, a.url, a.timeout)
        browser.close()                 # Chromium writes its NetLog as it closes
        found = _lookups(netlog_path(a.log), navigation.get("timeOrigin"))
        first_query = found.first_query_ms / 1000 if found.first_query_ms is not None else None
        summary, records = load.summary(navigation, first_query)
        summary.update(dns_lookups=len(found.names), looked_up=list(found.names), dns_queries=found.queries)
        a.log.write_text(json.dumps({"url": a.url, "warm": a.warm, "navigation": navigation,
                                     "summary": summary, "requests": records}, indent=1) + "\n")
        summary.update(ok=summary["page_load_s"] is not None, url=a.url, warm=a.warm)
        if not summary["ok"]:
            summary["error"] = "no load event within the timeout"
        print(json.dumps(summary), flush=True)
        return 0 if summary["ok"] else 1
    except (DevToolsError, OSError, RuntimeError, ValueError, Stopped) as e:
        return _fail(str(e))
    finally:
        if browser is not None:
            browser.close()
        shutil.rmtree(a.profile, ignore_errors=True)      # megabytes of Chromium's, nothing measured


class Stopped(Exception):
    """squall stopped the driver during the load (its timeout): the browser is closed on the way out."""


def _stop_on_signals() -> None:
    """From the load on, SIGTERM and SIGINT end it (Stopped), closing the browser, instead of
    waiting blocked until squall's SIGKILL would leave Chromium behind."""
    def stop(number: int, _frame: object) -> None:
        raise Stopped(f"stopped by signal {signal.Signals(number).name} during the load")
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, stop)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})


def _fail(error: str) -> int:
    print(f"driver: {error}", file=sys.stderr)
    print(json.dumps({"ok": False, "error": error}), flush=True)
    return 1


def _point_resolver(profile: Path, server: str) -> None:
    """/etc/resolv.conf, in this mount namespace only, names the replay's server."""
    shutil.rmtree(profile, ignore_errors=True)
    profile.mkdir(parents=True)
    conf = profile.parent / f"{profile.name}.resolv.conf"
    conf.write_text(dns.resolv_conf(server))
    for argv in (["mount", "--make-rprivate", "/"], ["mount", "--bind", str(conf), "/etc/resolv.conf"]):
        done = subprocess.run(argv, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: {done.stderr.strip()} (the driver runs under unshare --mount)")


def _start(a: argparse.Namespace) -> DevTools:
    flags = [*FLAGS, f"--user-data-dir={a.profile}", host_rules(a.names.split(","))]
    flags += [f"--log-net-log={netlog_path(a.log)}", "--net-log-capture-mode=Default"]
    if a.spki_file is not None:
        flags.append(f"--ignore-certificate-errors-spki-list={a.spki_file.read_text().strip()}")
    err = open(a.log.with_suffix(".chromium.stderr"), "wb")
    return DevTools([a.chromium, *flags, "about:blank"], stdout=subprocess.DEVNULL, stderr=err)


def netlog_path(log: Path) -> Path:
    return log.with_suffix(".netlog.json")


def _lookups(path: Path, navigation_start_ms: float | None) -> netlog.Lookups:
    """The measured load's look-ups from the browser's NetLog (testbed/browser/netlog.py), which
    is then removed (hundreds of kB per load; what squall reads of it is in the summary): those
    that began after navigation start, less LOOKUP_LEAD_MS (the navigation's own look-up may begin
    just before the start Navigation Timing gives)."""
    since = None if navigation_start_ms is None else navigation_start_ms - LOOKUP_LEAD_MS
    found = netlog.lookups(path, since)
    path.unlink()
    return found


def host_rules(names: list[str]) -> str:
    """Only the page's names are looked up: Chromium's own services (accounts.google.com,
    update.googleapis.com, ...) fail at once instead of sending queries over the link."""
    return "--host-resolver-rules=MAP * ~NOTFOUND, " + ", ".join(f"EXCLUDE {n}" for n in names)


def _attach(browser: DevTools) -> str:
    """The session of the browser's page, with the network and page events on."""
    deadline = time.monotonic() + 30
    while True:
        pages = [t for t in browser.command("Target.getTargets")["targetInfos"] if t["type"] == "page"]
        if pages:
            break
        if time.monotonic() > deadline:
            raise RuntimeError("Chromium opened no page within 30 s")
        time.sleep(0.05)
    session = browser.command("Target.attachToTarget", {"targetId": pages[0]["targetId"], "flatten": True})["sessionId"]
    for method in ("Network.enable", "Page.enable"):
        browser.command(method, session=session)
    return session


def _navigate(browser: DevTools, session: str, url: str) -> None:
    reply = browser.command("Page.navigate", {"url": url}, session=session)
    if reply.get("errorText"):
        raise RuntimeError(f"navigating to {url}: {reply['errorText']}")


def _blank(browser: DevTools, session: str, timeout_s: float = 10.0) -> None:
    """Leaves the page for about:blank and waits for that load, so its events end before the next."""
    _navigate(browser, session, "about:blank")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        event = browser.event(0.05)
        if event is not None and event.session == session and event.method == "Page.loadEventFired":
            return
    raise RuntimeError(f"about:blank did not load within {timeout_s:g} s")


def _load(browser: DevTools, session: str, url: str, timeout_s: float) -> tuple[PageLoad, dict[str, Any]]:
    """Navigates and follows the load until its load event and the requests it started have ended."""
    load = PageLoad()
    while browser.event(0) is not None:     # what came before this navigation
        pass
    deadline = time.monotonic() + timeout_s
    _navigate(browser, session, url)
    settle = None
    while time.monotonic() < (deadline if settle is None else min(deadline, settle)):
        event = browser.event(0.05)
        if event is not None and event.session == session:
            load.add(event.method, event.params)
        if load.load_event is not None:
            if settle is None:
                settle = time.monotonic() + AFTER_LOAD_S
            if load.pending() == 0:
                break
        if event is None and browser.proc.poll() is not None:
            raise RuntimeError(f"Chromium exited with code {browser.proc.returncode} during the load")
    if load.main is None:
        raise RuntimeError(f"Chromium sent no request for {url}")
    found = browser.command("Runtime.evaluate", {"expression": NAVIGATION_TIMING, "returnByValue": True},
                            session=session)
    value = found.get("result", {}).get("value")
    return load, json.loads(value) if isinstance(value, str) else {}


if __name__ == "__main__":
    raise SystemExit(main())
