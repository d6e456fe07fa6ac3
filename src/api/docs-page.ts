/**
 * The human docs page: a small HTML page that renders /api/v1/openapi.json with Redoc, loaded by
 * the reader's browser from a CDN (the server itself never fetches anything).
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
<script src="https://cdn.jsdelivr.net/npm/redoc@2.5.0/bundles/redoc.standalone.js"></script>
</body>
</html>
`;
