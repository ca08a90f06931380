"""Hand-labelled sets the verdicts are measured on (written for this project)."""
