from sidecar.entry import main

raise SystemExit(main())
