"""`python -m skillbank.mcp_server`: serve a skillbank memory root over MCP."""

from skillbank.mcp_server.runner import main

raise SystemExit(main())
