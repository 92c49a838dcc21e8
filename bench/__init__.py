"""Benchmarks (`make bench`): each module measures ours beside a peer in the same run."""
