"""The commands that act on a validation: fix, smoke, diff, repro, triage."""
