// The model format, checked by every reader of a model folder (model names are validated in pipeline/paths.js).

/** Format identifier written into every model manifest; bump on incompatible changes. */
export const MODEL_FORMAT = 'scdv-model/1';
