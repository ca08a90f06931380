"""The YAML config: ranges, typed values, prompts and token estimates."""
