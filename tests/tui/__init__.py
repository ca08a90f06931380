"""The review TUI: screens, dialogs, the picker, snapshots and real terminals (tmux)."""
