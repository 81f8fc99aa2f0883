"""Tiny Labs: small black-box scientific sandboxes with known ground truth."""
