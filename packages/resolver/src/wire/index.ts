export * from "./constants.js";
export * from "./decode.js";
export * from "./edns.js";
export * from "./encode.js";
export * from "./message.js";
export * from "./name.js";
export * from "./presentation.js";
export * from "./truncate.js";
