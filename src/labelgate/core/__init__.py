"""The model: the judge of targets, the check catalog and codes, Report/Finding/Example, label arrays, batch plans."""
