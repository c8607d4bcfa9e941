import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { PermissionError, toGatewayError } from '../../errors/gateway-error';
import type { Principal } from '../../auth/principal';
import { bearerToken } from '../../http/credentials';
import { OPENAI_ERRORS, sendError } from '../../http/error-shapes';
import type { GatewayServices } from '../../http/gateway-services';
import { checkKeyBeside } from '../../http/key-check';
import { requestIdOf } from '../../http/request-id';
import { optionalString } from './query-params';

/**
 * Management API access: the platform admin key (every organisation) or a key of role `admin` (its
 * own organisation only). The principal is left in `res.locals.admin`.
 */
export function adminAuth(services: GatewayServices) {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      res.locals.admin = await adminPrincipal(services, req, res);
      next();
    } catch (err) {
      sendError(res, toGatewayError(err), OPENAI_ERRORS);
    }
  };
}

/**
 * The management API's caller, or the 401/403 to answer (the one check of every admin route, and of a body
 * they cannot read). The 403 of a valid key that is not an admin's is counted and gets its access line.
 */
export async function adminPrincipal(services: GatewayServices, req: IncomingMessage, res: ServerResponse): Promise<Principal> {
  const startedAt = services.clock.now();
  // the auth stage's own check, then the management API's role
  const principal = await checkKeyBeside(services, 'admin', bearerToken(req.headers.authorization), true);
  if (principal.role !== 'platform_admin' && principal.role !== 'admin') {
    const error = new PermissionError('This key may not use the management API.', 'not_admin');
    services.reporter.refusedKnown('admin', principal, error, requestIdOf(res), startedAt, services.clock.now());
    throw error;
  }
  return principal;
}

export function adminOf(res: Response): Principal {
  return res.locals.admin as Principal;
}

/** The organisation an admin acts on: an org admin only ever its own. */
export function orgFilter(admin: Principal, raw: unknown): string | undefined {
  const requested = optionalString(raw, 'org');
  if (admin.role === 'platform_admin') return requested;
  if (requested && requested !== admin.org) throw new PermissionError('An organization admin can only see its own organization.', 'cross_org_denied');
  return admin.org ?? undefined;
}

/** Wrap an async admin handler so any error is answered in the OpenAI error shape. */
export function adminHandler(fn: (req: Request, res: Response) => Promise<void>) {
  return async (req: Request, res: Response) => {
    try {
      await fn(req, res);
    } catch (err) {
      sendError(res, toGatewayError(err), OPENAI_ERRORS);
    }
  };
}
