import type { Router } from 'express';
import { ResponsesHandler } from './responses-handler';
import type { GatewayServices } from '../../http/gateway-services';

/** `POST /v1/responses`: the Responses API with the gateway-run MCP tool loop (core/apis/responses). */
export function installResponsesRoutes(router: Router, services: GatewayServices): void {
  let handler: ResponsesHandler | undefined;
  router.post('/v1/responses', async (req, res) => {
    // built on first use: boot extensions (the MCP gateway) are registered by then
    handler ??= new ResponsesHandler(services);
    await handler.handle(req, res);
  });
}
