import { bedrockError } from '../../../providers/bedrock/errors';
import { describeErrorGoldens } from '../error-golden';

describeErrorGoldens('bedrock', (status, body, headers) => bedrockError(status, body, headers));
