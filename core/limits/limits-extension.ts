import type { BootExtension } from '../boot/extensions';
import type { Clock } from '../plugins/contracts';
import { ADMISSION, CHANGE_EVENTS, CLOCK, STORE } from '../plugins/tokens';
import type { ChangeEvents } from '../store/events/change-events';
import type { StoreBackend } from '../store/store-backend';
import { LimitsAdmission } from './admission';
import { LimitSubjects } from './limit-subjects';

/**
 * Registers budget and rate-limit admission. Keys and organisations created through the management API
 * may carry limits too, so admission is always on; a request whose key and organisation have no limits
 * costs one map lookup.
 */
export const limitsExtension: BootExtension = async ({ container, config }) => {
  const store = container.resolve<StoreBackend>(STORE);
  const clock = container.resolve<Clock>(CLOCK);
  const events = container.isRegistered(CHANGE_EVENTS, true) ? container.resolve<ChangeEvents>(CHANGE_EVENTS) : undefined;
  const subjects = new LimitSubjects(config.organizations, store, () => clock.now(), events, config.store.graceSeconds * 1000);
  const admission = new LimitsAdmission(subjects, store, clock);
  container.registerInstance(ADMISSION, admission);
  return async () => {
    subjects.close();
    // corrections the store refused when they were due: the store closes after this (bounded like the log's flush)
    await admission.close(Math.max(1000, config.server.drainSeconds * 1000));
  };
};
