/** The demo config's admin key (issue 17 "Public names"): well known, so it may only ever serve a laptop. */
export const DEMO_ADMIN_KEY = 'sk-demo-admin';

/**
 * What the gateway prints once it listens: its address and the console's. The demo admin key is the one
 * key ever printed: it is public already (it is in the demo config and the README), and a new user needs it
 * to sign in to /ui. Any other key is never printed.
 */
export function startupLines(url: string, adminKey: string | undefined): string[] {
  const lines = [`model-gateway listening on ${url}`];
  if (adminKey === DEMO_ADMIN_KEY) {
    lines.push(`web console: ${url}/ui (sign in with the demo admin key ${DEMO_ADMIN_KEY}: for local use only, set GATEWAY_ADMIN_KEY before exposing this gateway)`);
  } else {
    lines.push(`web console: ${url}/ui`);
  }
  return lines;
}
