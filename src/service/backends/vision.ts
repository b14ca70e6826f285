// The service's offline vision backend: OpenCV faces and motion, described as one sentence (shared with the robot's LocalVLMInput).
export { HAAR_DIRS, MOTION_LEVELS, VisionAnalyser, describe, type FrameAnalysis } from '../../vision/analyse.js';
