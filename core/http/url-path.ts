/** The path of a request's URL: what comes before its query string (`/` when the request has none). */
export function urlPath(url: string | undefined): string {
  if (!url) return '/';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}
