/**
 * The human docs page: a small HTML page that renders /api/v1/openapi.json with Redoc, served
 * from our own origin (/vendor/redoc.standalone.js, from the `redoc` npm package): it works
 * offline and calls no third party.
 */
export const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>x402-tally API</title>
</head>
<body>
<noscript>This page renders <a href="openapi.json">the OpenAPI document</a> with JavaScript.</noscript>
<redoc spec-url="openapi.json"></redoc>
<script src="/vendor/redoc.standalone.js"></script>
</body>
</html>
`;
