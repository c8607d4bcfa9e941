/** The line for a port another process holds: what happened and how to pick another. */
export function portInUseMessage(host: string, port: number): string {
  return `port ${port} on ${host} is already in use (another gateway?); pick another with --port N, or --port 0 for any free port`;
}

export function isAddressInUse(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'EADDRINUSE';
}
