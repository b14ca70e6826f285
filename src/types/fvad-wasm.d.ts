// Types of @echogarden/fvad-wasm (libfvad, the WebRTC voice activity detector compiled to WebAssembly), which ships none.
declare module '@echogarden/fvad-wasm' {
  export interface FvadModule {
    _fvad_new(): number;
    _fvad_free(inst: number): void;
    _fvad_reset(inst: number): void;
    /** 0..3, more aggressive in calling audio non-speech; returns 0 on success. */
    _fvad_set_mode(inst: number, mode: number): number;
    /** 8000, 16000, 32000 or 48000; returns 0 on success. */
    _fvad_set_sample_rate(inst: number, rate: number): number;
    /** 1 speech, 0 not, -1 error; frames of 10, 20 or 30 ms. */
    _fvad_process(inst: number, frame: number, samples: number): number;
    _malloc(bytes: number): number;
    _free(ptr: number): void;
    HEAP16: Int16Array;
  }
  const factory: (options?: object) => Promise<FvadModule>;
  export default factory;
}
