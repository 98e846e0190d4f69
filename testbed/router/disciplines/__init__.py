"""The router's queue disciplines: one type per discipline (base.py says what each provides),
chosen by name in one table (registry.py)."""
