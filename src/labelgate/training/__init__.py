"""The consumer's side, without torch: the model's classification head found by family, checkpoints read without running code, the DataLoader's order replayed."""
