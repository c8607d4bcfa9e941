import type { BootExtension } from '../boot/extensions';
import { CHANGE_EVENTS, CLOCK, DEPLOYMENT_HEALTH, MODEL_CATALOG, ROUTING_POLICY } from '../plugins/tokens';
import type { InstanceEvents } from '../store/events/change-events';
import { cooldownSettings, DeploymentHealth } from './deployment-health';
import type { ModelCatalog } from './model-catalog';
import { RoutingPolicy, type SleepingClock } from './routing-policy';

/** Registers deployment health (cooldowns, load) and the routing policy used by the route and call stages. */
export const routingExtension: BootExtension = async ({ container, config }) => {
  const catalog = container.resolve<ModelCatalog>(MODEL_CATALOG);
  const clock = container.resolve<SleepingClock>(CLOCK);
  const deployments = catalog.names().flatMap((name) => catalog.group(name) ?? []);
  const health = new DeploymentHealth(deployments, cooldownSettings(config.routing), () => clock.now());
  container.registerInstance(DEPLOYMENT_HEALTH, health);
  container.registerInstance(ROUTING_POLICY, new RoutingPolicy(config.routing, health, clock));
  // cooldowns are shared: a deployment one instance found failing is avoided by all within a second
  const events = container.resolve<InstanceEvents>(CHANGE_EVENTS);
  health.onCooldown = (deploymentId, until) => void events.publish({ type: 'deployment.cooldown', deploymentId, until }).catch(() => undefined);
  const unsubscribe = events.subscribe((event) => {
    if (event.type === 'deployment.cooldown' && event.origin !== events.origin) health.applyCooldown(event.deploymentId, event.until);
  });
  return async () => unsubscribe();
};
