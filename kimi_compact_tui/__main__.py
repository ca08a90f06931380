from kimi_compact_tui.cli import main

raise SystemExit(main())
