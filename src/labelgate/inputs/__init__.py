"""The input as one logical dataset: columns detected, the batch plan, data in memory, and what a run resolved."""
