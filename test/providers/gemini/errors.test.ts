import { googleError } from '../../../providers/gemini/errors';
import { describeErrorGoldens } from '../error-golden';

describeErrorGoldens('gemini', (status, body, headers) => googleError('Gemini', status, body, headers));
