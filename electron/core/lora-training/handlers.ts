import type { HandlerMap } from '../../../shared/contract/define.ts';
import type { lorasCommands } from '../../../shared/contract/loras.ts';
import type { LoraTrainer } from './service.ts';

/** The LoRA training commands: one trainer serves the app, the web host and the CLI. */
export function loraTrainingHandlers(trainer: LoraTrainer): HandlerMap<typeof lorasCommands> {
  return {
    'loras.trainCheck': async (req) => {
      const { body: _body, ...check } = await trainer.check(req);
      return check;
    },
    'loras.train': (req) => trainer.train(req),
    'loras.trainings': ({ limit }) => ({ trainings: trainer.list(limit) }),
  };
}
