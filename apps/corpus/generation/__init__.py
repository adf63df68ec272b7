"""Making perturbations: rule-based kinds locally, checks on every output."""
