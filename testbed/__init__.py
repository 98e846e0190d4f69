"""squall testbed: scenarios, namespaces/hosts, runner."""
