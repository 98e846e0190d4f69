"""Real pages in a real browser (docs/browser.md): a HAR file replayed on the fixed host by one
nginx server block per origin, each on its own address, with TLS from a CA made per replay and a
DNS server answering the origins' names (`replay.py`, the `browser` flow's server), and headless
Chromium driven over its DevTools pipe on the mobile host (`driver.py`, the flow's client).

One concept per file: har.py (reading a HAR), bodies.py (bodies the HAR omits), origins.py (the
origin servers' nginx), ca.py (the CA), dns.py (the DNS server), replay.py (the replay program),
devtools.py (the DevTools pipe client), requests_log.py (what the browser's events say), netlog.py
(its DNS look-ups by its NetLog), driver.py (the browser program), pages.py (the shipped pages' HAR
files)."""
