// ProfirestAPI — the Swift client of the Profirest API v2.
