import Mocha from 'mocha';

/**
 * mocha's spec reporter plus one plain closing line, `N passed, N failed` (with `, N skipped`), that CI
 * tooling reads regardless of the test runner.
 */
class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const { passes = 0, failures = 0, pending = 0 } = runner.stats ?? {};
      process.stdout.write(`\ntests: ${passes} passed, ${failures} failed${pending ? `, ${pending} skipped` : ''}\n`);
    });
  }
}

export = SummaryReporter;
